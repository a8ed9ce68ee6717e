"""Helpers tests share: servers, clients and processes that stand where users and operators would."""
