"""The Prefect flows: thin wiring around the stage libraries, run state, the local server and
deployments. Importing the package sets Prefect's environment once, before any module here imports
Prefect."""
from .env import configure_prefect

configure_prefect()
