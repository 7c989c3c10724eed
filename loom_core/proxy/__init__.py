"""The recording proxy: ``python -m loom_core proxy`` and ``python -m loom_core record``.

A reverse proxy (aiohttp) in front of a model API that records every completed
exchange as loom-harness proxy-trace effects (loom-format.md §6), for Anthropic
Messages, OpenAI Chat Completions and the OpenAI Responses API, streamed or not.

Modules, in the order a request meets them:

* :mod:`.config` -- flags and the :class:`~.config.ProxyConfig` (incl. the shield's
  :class:`~.config.ShieldFlags`, stored for the shield engine to consume);
* :mod:`.server` -- the aiohttp app: forward, relay, record; :mod:`.upstream` the
  header rules; :mod:`.relay` the unbuffered SSE relay;
* :mod:`.hooks` -- where the shield plugs in (request observation, response screening);
* :mod:`.sse_bulk`, :mod:`.reconstruct` (:mod:`.stream_acc`),
  :mod:`.synthesize` -- SSE parsing, rebuilding the final message of a stream, and
  rendering a recorded message as a stream (replay);
* :mod:`.session` -- persistence: journal (§5 format), exchange sidecar
  (:mod:`.sidecar`, requests stored as deltas), periodic atomic trace
  (:mod:`.tracefile`, each entry serialized once), crash recovery;
* :mod:`.scrub` -- ``--scrub`` redaction at the persist boundary;
* :mod:`.replay` -- ``--replay FILE``; :mod:`.runner` -- process lifecycle, signals,
  ``--ready-file``; :mod:`.record` -- ``record -- COMMAND``; :mod:`.commands` -- CLI.
"""
