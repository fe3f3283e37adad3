"""Reference arms the paper compares against: raw retrieval (± tags, reconstruction, oracle
order), chunk/session retrieval, long context, token budgets, and no memory."""
