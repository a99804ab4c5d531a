// The topology page: draws the server's capped graph with cytoscape.js and opens the side panel
// (an HTMX fragment) for the node that is clicked.
(function () {
  "use strict";

  const TYPE_COLOURS = {
    person: "#4f46e5", organization: "#0ea5e9", location: "#10b981", concept: "#94a3b8",
    technology: "#f59e0b", product: "#ec4899", event: "#ef4444", work: "#8b5cf6", group: "#14b8a6",
  };
  const TIER_COLOURS = { hot: "#e8590c", warm: "#d4a106", archive: "#64748b" };

  function elements(data) {
    const nodes = data.nodes.map((n) => ({
      group: "nodes",
      data: {
        id: n.id, kind: n.kind,
        label: n.kind === "memory" && n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label, parent: n.parent || undefined,
        entityId: n.entityId, memoryId: n.memoryId,
        colour: n.kind === "entity" ? (TYPE_COLOURS[n.type] || "#94a3b8") : (TIER_COLOURS[n.type] || "#6366f1"),
        size: n.kind === "entity" ? 16 + 44 * (n.salience || 0) : 22,
      },
    }));
    const edges = data.edges.map((e) => ({
      group: "edges",
      data: {
        id: e.id, source: e.source, target: e.target, weight: e.weight,
        label: (e.relationType || e.reason || "").replace(/_/g, " "),
        width: 1 + 5 * e.weight,
      },
    }));
    return nodes.concat(edges);
  }

  function style() {
    return [
      { selector: "node", style: {
        "background-color": "data(colour)", width: "data(size)", height: "data(size)", label: "data(label)",
        "font-size": 10, color: "#1d2330", "text-valign": "bottom", "text-margin-y": 3,
        "text-outline-color": "#fff", "text-outline-width": 2, "min-zoomed-font-size": 7 } },
      { selector: "node[kind = 'tag']", style: {
        "background-color": "#eef2ff", "background-opacity": 0.55, "border-color": "#c7d2fe", "border-width": 1,
        shape: "round-rectangle", "text-valign": "top", "font-size": 11, color: "#3730a3", "font-weight": 600 } },
      { selector: "edge", style: {
        width: "data(width)", "line-color": "#cbd5e1", "curve-style": "haystack", opacity: 0.8 } },
      { selector: "edge.hover", style: {
        label: "data(label)", "font-size": 10, "line-color": "#6366f1", color: "#3730a3",
        "text-background-color": "#fff", "text-background-opacity": 1, "text-background-padding": 2,
        "curve-style": "bezier", "z-index": 10 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#111827" } },
    ];
  }

  const FORCE_NODES = 300;

  function layout(cy) {
    // A force-directed layout reads well but costs O(n²) per step, so it places only the most
    // salient connected nodes; the rest settle next to a placed neighbour, and nodes without any
    // edge are set out in a grid below. That keeps 2,000 nodes to a second or two.
    const connected = cy.nodes().filter((n) => n.degree() > 0 || n.isParent() || n.isChild());
    const ranked = connected.sort((a, b) => b.data("size") + b.degree() - a.data("size") - a.degree());
    const core = ranked.slice(0, FORCE_NODES);
    const coreWithParents = core.union(core.parents()).union(core.children());
    coreWithParents.layout({ name: "cose", animate: false, randomize: true, fit: false, padding: 20,
                             nodeRepulsion: () => 9000, idealEdgeLength: () => 70,
                             numIter: core.length > 150 ? 600 : 1000 }).run();
    const placed = new Set(coreWithParents.map((n) => n.id()));
    let pending = connected.filter((n) => !placed.has(n.id()));
    let angle = 0;
    while (pending.nonempty()) {
      const before = pending.length;
      pending.forEach((node) => {
        const anchor = node.neighborhood("node").filter((n) => placed.has(n.id()))[0];
        if (!anchor) return;
        angle += 2.39996;  // the golden angle spreads the newcomers around their anchor
        const radius = 45 + (angle % 30);
        const at = anchor.position();
        node.position({ x: at.x + radius * Math.cos(angle), y: at.y + radius * Math.sin(angle) });
        placed.add(node.id());
      });
      pending = pending.filter((n) => !placed.has(n.id()));
      if (pending.length === before) break;
    }
    const alone = cy.nodes().filter((n) => !placed.has(n.id()) && !n.isParent());
    if (alone.nonempty()) {
      const box = placed.size ? cy.nodes().filter((n) => placed.has(n.id())).boundingBox() : { x1: 0, y2: 0, w: 600 };
      const columns = Math.max(8, Math.ceil(Math.sqrt(alone.length * 3)));
      const step = 28;
      alone.layout({ name: "grid", fit: false, avoidOverlap: false, cols: columns,
                     boundingBox: { x1: box.x1, y1: box.y2 + 40, w: Math.max(box.w, columns * step),
                                    h: Math.ceil(alone.length / columns) * step } }).run();
    }
    cy.fit(undefined, 20);
    if (cy.zoom() > 1.4) {  // a handful of nodes should not fill the canvas
      cy.zoom(1.4);
      cy.center();
    }
  }

  function panelUrl(urls, node) {
    if (node.data("kind") === "entity") return urls.entity.replace(/0\/$/, node.data("entityId") + "/");
    if (node.data("kind") === "memory") return urls.memory.replace(/0\/panel\/$/, node.data("memoryId") + "/panel/") + "?from=graph";
    return null;
  }

  function start() {
    const container = document.getElementById("cy");
    const dataTag = document.getElementById("graph-data");
    if (!container || !dataTag || typeof cytoscape === "undefined") return;
    const data = JSON.parse(dataTag.textContent);
    const urls = JSON.parse(document.getElementById("graph-urls").textContent);
    const cy = cytoscape({
      container, elements: elements(data), style: style(), layout: { name: "preset" },
      minZoom: 0.02, maxZoom: 4,
      textureOnViewport: data.nodes.length > 400, hideEdgesOnViewport: data.nodes.length > 400,
    });
    layout(cy);
    window.kybernesisGraph = cy;

    cy.on("mouseover", "edge", (event) => event.target.addClass("hover"));
    cy.on("mouseout", "edge", (event) => event.target.removeClass("hover"));
    cy.on("tap", "node", (event) => {
      const url = panelUrl(urls, event.target);
      if (!url) return;
      cy.nodes().unselect();
      event.target.select();
      htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" });
    });

    if (data.centre) {
      const node = cy.getElementById(data.centre);
      if (node.nonempty()) {
        node.select();
        cy.center(node);
        cy.zoom({ level: Math.max(cy.zoom(), 1), position: node.position() });
        const url = panelUrl(urls, node);
        if (url) htmx.ajax("GET", url, { target: "#graph-panel", swap: "innerHTML" });
      }
    }
    // The node list under the canvas opens the same side panel (via hx-get); keep the drawing in step.
    document.addEventListener("click", (event) => {
      const link = event.target.closest("#graph-list [data-node-id]");
      if (!link) return;
      const node = cy.getElementById(link.dataset.nodeId);
      if (node.empty()) return;
      cy.nodes().unselect();
      node.select();
    });
    container.dataset.ready = "true";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
