"""Long-form rendering, resumable at any moment: a book's chapters to files (its folder store
and its assembled outputs); manifests in `manifest/`."""
