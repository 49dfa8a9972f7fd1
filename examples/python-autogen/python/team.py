"""AutoGen math team (solver + checker) for AGL. NOT RUN HERE: pip cannot install AutoGen on the machine that wrote it.

Started by the AGL runner once per attempt (``processAgent({ command: 'python3', args: ['python/team.py'] })``), it
reads the AGL env contract:

* ``AGL_TASK_INPUT``: the task as JSON, ``{"id", "question", "answer"}``;
* ``AGL_OPENAI_BASE_URL`` / ``AGL_KEY``: the LLM endpoint (the AGL gateway scoped to this rollout when the trainer
  runs with ``gateway: true``), falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``; ``AGL_MODEL`` names the model;
* ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_EXPORTER_OTLP_HEADERS``, ``OTEL_RESOURCE_ATTRIBUTES``: where the
  spans go and which rollout / attempt they belong to (read by the OpenTelemetry SDK itself);
* ``AGL_EVENT_URL``: where the reward is posted.

Set ``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`` and
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`` so the OpenAI instrumentation puts the messages on
the ``chat`` spans (the TypeScript side sets both for you).
"""

import asyncio
import json
import os
import urllib.request

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_ext.models.openai import OpenAIChatCompletionClient
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

SOLVER_SYS = "You are the solver. Use the calculator tool for arithmetic, then reply with the final number only."
CHECKER_SYS = (
    "You are the checker. Reply APPROVE if the solver's answer follows from the question, "
    "otherwise explain the mistake."
)

# The tracer provider: no AGL code. The exporter and the resource read the OTel env vars the runner sets.
provider = TracerProvider(resource=Resource.create({"service.name": "autogen-math-team"}))
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)  # AgentChat's GenAI spans use the global provider
OpenAIInstrumentor().instrument(tracer_provider=provider)


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression made of digits, + - * / and parentheses."""
    if not set(expression) <= set("0123456789+-*/(). "):
        return "error: only digits, + - * / and parentheses are allowed"
    try:
        value = eval(expression, {"__builtins__": {}}, {})  # noqa: S307 - the character check above limits it to arithmetic
    except Exception as err:  # noqa: BLE001 - the error text goes back to the model
        return f"error: {err}"
    return str(int(value)) if float(value).is_integer() else str(value)


def post_reward(value: float) -> None:
    url = os.environ.get("AGL_EVENT_URL")
    if not url:
        return
    body = json.dumps({"event_type": "reward", "data": {"value": value}}).encode()
    headers = {"content-type": "application/json"}
    if os.environ.get("AGL_KEY"):
        headers["authorization"] = f"Bearer {os.environ['AGL_KEY']}"
    urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers, method="POST"), timeout=30).read()


async def main() -> None:
    task = json.loads(os.environ["AGL_TASK_INPUT"])
    client = OpenAIChatCompletionClient(
        model=os.environ.get("AGL_MODEL", "gpt-4o-mini"),
        base_url=os.environ.get("AGL_OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL"),
        api_key=os.environ.get("AGL_KEY") or os.environ.get("OPENAI_API_KEY", "unused"),
        model_info={"vision": False, "function_calling": True, "json_output": False, "structured_output": False, "family": "unknown"},
        temperature=0.0,
    )
    solver = AssistantAgent(
        "solver",
        model_client=client,
        tools=[calculator],
        system_message=SOLVER_SYS,
        reflect_on_tool_use=True,
        description="Solves word problems with a calculator.",
    )
    checker = AssistantAgent("checker", model_client=client, system_message=CHECKER_SYS, description="Checks the solver's answer.")
    team = RoundRobinGroupChat(
        [solver, checker], termination_condition=TextMentionTermination("APPROVE") | MaxMessageTermination(6)
    )
    result = await team.run(task=task["question"])
    answer = next(
        (m.content for m in reversed(result.messages) if m.source == "solver" and isinstance(m.content, str)), ""
    )
    reward = 1.0 if answer.strip().replace(",", "") == task["answer"] else 0.0
    post_reward(reward)
    await client.close()
    provider.force_flush()
    provider.shutdown()
    print(json.dumps({"task": task["id"], "answer": answer, "reward": reward}))


if __name__ == "__main__":
    asyncio.run(main())
