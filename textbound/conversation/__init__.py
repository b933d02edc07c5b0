"""Conversations: the follow-up rewrite rules and the thread stores.

The stores (SQLite, PostgreSQL) keep each thread's turns; `rewrite` makes a follow-up standalone.
"""
