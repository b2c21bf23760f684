"""The user's case of issue 23: a 12-node grid file that names its own cost model.

Three rows of four nodes, 0.1 apart in a row and 0.2 between rows, so the ``distance``
model gives 0.1 along a row and 0.2 down a column; no link writes a cost. The file also
names its radius and a default delay.
"""
import json

ROWS, COLS = 3, 4
RADIUS, DELAY = 0.25, 0.02


def grid12_doc(**graph) -> dict:
    """The node-link document; ``graph`` replaces the file's graph settings."""
    nodes = [{"id": r * COLS + c, "pos": [0.1 * c, 0.2 * r]}
             for r in range(ROWS) for c in range(COLS)]
    links = [{"source": r * COLS + c, "target": r * COLS + c + 1}
             for r in range(ROWS) for c in range(COLS - 1)]
    links += [{"source": r * COLS + c, "target": (r + 1) * COLS + c}
              for r in range(ROWS - 1) for c in range(COLS)]
    meta = {"link_cost": "distance", "radius": RADIUS, "defaults": {"delay": DELAY}}
    return {"graph": {**meta, **graph}, "nodes": nodes, "links": links}


def write_grid12_json(path, **graph):
    path.write_text(json.dumps(grid12_doc(**graph)))
    return path


def write_grid12_graphml(path):
    """The same grid as GraphML: the default delay is the delay key's ``<default>``."""
    doc = grid12_doc()
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
             '<key id="r" for="graph" attr.name="radius" attr.type="double"/>',
             '<key id="m" for="graph" attr.name="link_cost" attr.type="string"/>',
             '<key id="x" for="node" attr.name="x" attr.type="double"/>',
             '<key id="y" for="node" attr.name="y" attr.type="double"/>',
             f'<key id="d" for="edge" attr.name="delay" attr.type="double">'
             f'<default>{DELAY}</default></key>',
             '<graph edgedefault="undirected">',
             f'<data key="r">{RADIUS}</data><data key="m">distance</data>']
    lines += [f'<node id="{n["id"]}"><data key="x">{n["pos"][0]}</data>'
              f'<data key="y">{n["pos"][1]}</data></node>' for n in doc["nodes"]]
    lines += [f'<edge source="{e["source"]}" target="{e["target"]}"/>' for e in doc["links"]]
    path.write_text("\n".join(lines + ["</graph></graphml>"]))
    return path
