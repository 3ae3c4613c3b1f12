"""Word timings: where each word of a text is spoken in its audio, for word-level subtitles.
English by forced alignment (PocketSphinx's bundled model), Chinese from the recogniser's token
times; a word no pass could place is given an interpolated time and marked estimated (no Qt)."""
