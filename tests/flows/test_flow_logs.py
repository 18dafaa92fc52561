"""Library logs reach the Prefect UI of the run they execute in (not only its task runs, with
"This run didn't generate logs")."""
import logging
import uuid

from perfalign.flows.env import route_library_logs


def test_library_loggers_are_shipped_to_the_flow_runs_logs(prefect_server, monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    route_library_logs()
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.context import get_run_context
    from prefect.settings import PREFECT_API_URL, temporary_settings

    marker = f"stage progress {uuid.uuid4().hex[:8]}"

    @flow(name="log-routing-probe")
    def probe() -> str:
        logging.getLogger("perfalign.perfdata.perf").info(marker)
        logging.getLogger("perfalign.alignment").warning(marker + " (warning)")
        return str(get_run_context().flow_run.id)

    import asyncio
    import time

    async def read(run_id):
        async with get_client() as client:
            return await client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[uuid.UUID(run_id)])))

    with temporary_settings({PREFECT_API_URL: prefect_server}):
        run_id = probe()
        deadline = time.monotonic() + 60  # logs are shipped in the background
        while True:
            messages = {(lg.name, lg.message) for lg in asyncio.run(read(run_id))}
            if ("perfalign.perfdata.perf", marker) in messages or time.monotonic() > deadline:
                break
            time.sleep(1)
    assert ("perfalign.perfdata.perf", marker) in messages, messages
    assert ("perfalign.alignment", marker + " (warning)") in messages
