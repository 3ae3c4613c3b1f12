"""Text in: cleaning and segmenting, numbers read out, the pronunciation dictionary, books split
into chapters (EPUB limits included) and dialogue scripts."""
