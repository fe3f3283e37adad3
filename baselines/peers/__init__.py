"""Peer memory systems (Mem0, Graphiti/Zep, HippoRAG-v2, MemoryOS) through their own packages.

Each is an optional extra (`make setup-peers`); importing this package needs none of them.
"""
