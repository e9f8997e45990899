"""One package per file format. Each exposes ``FORMATS`` (see explorer.format) and keeps its reading, its
model, its checks, its document (tree, details, links, search) and its samples to itself: formats never
import each other, and nothing outside a format imports it (the registry finds it by name)."""
