"""Developer tools kept in the repository, not in the installed wheel: the GPU run (gpucheck and
its parts), the speech API's load run and its bench. Run from a checkout (`make install` maps
them in): `python -m chattts_studio.core.devtools.gpucheck`."""
