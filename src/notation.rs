//! Position text: 0/1 strings, move lists and Wilson input files.
