"""Ways to hand a loaded document to other tools: an HTML report, a Chrome trace."""
