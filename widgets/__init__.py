"""ir-explorer's Textual views: they render what `explorer` computed and dispatch the user's intent."""
