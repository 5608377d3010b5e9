"""File input and output: reading documents with locations, atomic writes."""
