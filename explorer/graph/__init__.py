"""The graph wing: a model as a graph of ops, values and nested groups, and everything drawn or asked of it.

builder (what formats call) → model and shaping (groups, folded constants, the reading path) → layout and layered
(the picture in terminal cells) → text, colours and problems (what a box says and how it is coloured) → search,
node_data, match and compare (finding, per-node numbers, two graphs side by side). Never imports the schedule wing.
"""
