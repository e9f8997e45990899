// Lays out one graph with dagre and prints what the benchmark compares (benchmarks/graph_quality.py).
// stdin: {"nodes": [[w, h], ...], "edges": [[source, target], ...]} in terminal cells; stdout: JSON.
// With "parents": [[child, cluster], ...] (cluster ids past the nodes), dagre's compound mode draws the same
// frames as clusters (a cluster inside a cluster too).
const dagre = require("@dagrejs/dagre");

let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { nodes, edges, parents } = JSON.parse(input);
  const g = new dagre.graphlib.Graph({ multigraph: false, compound: Boolean(parents) });
  g.setGraph({ rankdir: "TB", nodesep: 2, ranksep: 3, edgesep: 1 });
  g.setDefaultEdgeLabel(() => ({}));
  nodes.forEach(([w, h], i) => g.setNode(String(i), { width: w, height: h }));
  (parents || []).forEach(([child, cluster]) => {
    if (!g.hasNode(String(cluster))) g.setNode(String(cluster), {});
    g.setParent(String(child), String(cluster));
  });
  edges.forEach(([s, t]) => g.setEdge(String(s), String(t)));
  const start = process.hrtime.bigint();
  try {
    dagre.layout(g);
  } catch (error) {
    process.stdout.write(JSON.stringify({ error: String(error).slice(0, 80) }));
    return;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const placed = nodes.map((_, i) => {
    const n = g.node(String(i));
    return [n.x, n.y];
  });
  const routes = edges.map(([s, t]) => g.edge(String(s), String(t)).points.map((p) => [p.x, p.y]));
  const graph = g.graph();
  process.stdout.write(JSON.stringify({ seconds, width: graph.width, height: graph.height, nodes: placed, routes }));
});
