"""End-of-turn detection: has the user finished speaking, or only paused mid-sentence?"""
