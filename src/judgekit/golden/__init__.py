"""Golden-set tooling: coverage, exports, candidate promotion, the re-baselining guard."""
