"""The answer pipeline's logic that the nodes call.

Evidence features, the reader (answerability), attributes and answer types, spelling
correction against the collection's words, and the gate's calibrations.
"""
