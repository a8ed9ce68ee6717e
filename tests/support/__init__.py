"""What the tests share: stand-ins, harnesses and servers. A test imports these, never another test module.

Stand-ins a benchmark or a user testing voice needs too live in ``voice.testing``.
"""
