"""Helpers the tests share: builders of inputs, ways of driving the embedded stack and the
command line, and what several lanes read. Nothing here is a test."""
