"""The derived-data cache (issue #76): what a big file became (a schedule's columns, its analysis, its problems) kept
for the next open, so a file reviewed for days is decoded once.

Never trusted over the file: an entry is found by a key made of the file's identity and every byte of it (and of
the explorer's code and the options that shape what is derived, `key.py`); it is read only from a private folder
the user owns (`folder.py`) and only whole (`entry.py`: a checksum over all of it). Any doubt is a miss: the file
is read as without a cache and the entry written again. `IR_EXPLORER_CACHE=off` (or `--no-cache`) turns it off;
`IR_EXPLORER_CACHE_SIZE` (or `--cache-size`) bounds it.
"""
