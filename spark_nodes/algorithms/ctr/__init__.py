"""ATR and CTR: a multi-way windowed join spread over hosts (docs/ALGORITHMS.md#atr-and-ctr).

A *diffusion* node cuts the streams into segments and routes them to *hosts*; hosts run
the join on what they receive; a *fusion* node merges the results. Two routing schemes:

- ATR (aligned tuple routing, :mod:`.atr`): the fastest stream is the master, cut into
  disjoint segments; the other streams follow in overlapping segments; one host per
  master segment, chosen least-loaded-first (:mod:`.load`).
- CTR (constrained tuple routing, :mod:`.ctr`): every stream is cut into segments; each
  segment's probe path is a chain of greedy weighted set covers (:mod:`.set_cover`) over
  a routing table of where segments live (:mod:`.routing_table`); intermediate results
  travel host to host (:mod:`.probe`).

The node programs are in :mod:`.programs`, the registered algorithms ("atr", "ctr",
"single-host") in :mod:`.algorithms`, Theorems B and D in :mod:`.overhead`.
"""
