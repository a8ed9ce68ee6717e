"""Stand-ins and real servers for testing and measuring voice, shared by tests/ and benchmarks/.

What lives here is what a developer testing a voice deployment wants too: the registry's speech servers
started on loopback with the bundled models, the commands deploy/'s units run, and stand-in parts that
drive the engine without models. Stand-ins only the test suite uses live in tests/support/.
"""
