// A tool-using agent written with the Vercel AI SDK, traced as its users trace it, run by
// tests/core/formats/ts_producers.py against the fake model upstream on 127.0.0.1.
//
//   node agent.mjs '<spec JSON>'
//
// spec: sdk       "ai6"        AI SDK 6, experimental_telemetry: { isEnabled: true }
//                 "ai7"        AI SDK 7 + @ai-sdk/otel's OpenTelemetry (GenAI spans)
//                 "ai7-legacy" AI SDK 7 + @ai-sdk/otel's LegacyOpenTelemetry (ai.* spans)
//       traceloop true: OpenLLMetry-JS (Traceloop.initialize) exports the spans (protobuf);
//                 else the OpenTelemetry SDK's own OTLP/HTTP JSON exporter does
//       provider  "openai" (Responses API) | "anthropic" (Messages API)
//       mode      "generate" (generateText) | "stream" (streamText)
//       baseURL   the fake upstream;  endpoint  the OTLP receiver
//       system, prompt, results {toolCallId: what the tool returns}
//       subagent  true: the book tool runs a sub-agent (see below)
// Prints one JSON line: what the SDK itself reports (final text, steps, usage per step
// and in total) and the tools it executed, in order.

const spec = JSON.parse(process.argv[2]);

async function startTracing() {
  if (spec.traceloop) {
    const traceloop = await import('@traceloop/node-server-sdk');
    traceloop.initialize({
      baseUrl: spec.endpoint,
      appName: 'travel-agent',
      disableBatch: true,
      traceloopSyncEnabled: false,
      silenceInitializationMessage: true,
    });
    return () => traceloop.forceFlush();
  }
  const { NodeTracerProvider, SimpleSpanProcessor } = await import(
    '@opentelemetry/sdk-trace-node'
  );
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const exporter = new OTLPTraceExporter({ url: `${spec.endpoint}/v1/traces` });
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return async () => {
    await provider.forceFlush();
    await provider.shutdown();
  };
}

async function loadSdk() {
  const v6 = spec.sdk === 'ai6';
  const ai = await import(v6 ? 'ai-v6' : 'ai');
  const vendor = await import(
    { openai: v6 ? 'ai-v6-openai' : '@ai-sdk/openai',
      anthropic: v6 ? 'ai-v6-anthropic' : '@ai-sdk/anthropic' }[spec.provider]
  );
  if (!v6) {
    const otel = await import('@ai-sdk/otel');
    ai.registerTelemetry(
      spec.sdk === 'ai7-legacy' ? new otel.LegacyOpenTelemetry() : new otel.OpenTelemetry(),
    );
  }
  const model = spec.provider === 'openai'
    ? vendor.createOpenAI({ baseURL: `${spec.baseURL}/v1`, apiKey: 'sk-test' })('gpt-4o')
    : vendor.createAnthropic({ baseURL: `${spec.baseURL}/v1`, apiKey: 'sk-ant-test' })(
      'claude-sonnet-4-5',
    );
  return { ai, model, v6 };
}

const flush = await startTracing();
const { ai, model, v6 } = await loadSdk();
const { z } = await import('zod');

const executed = [];
const run = (name) => async (input, { toolCallId }) => {
  executed.push({ id: toolCallId, name, input });
  if (name === 'book' && spec.subagent) return subagent(input.hotel);
  return spec.results[toolCallId];
};
// spec.subagent: the booking is done by a sub-agent, a generateText call of its own inside
// the tool (the AI SDK's documented sub-agent pattern); its answer is the tool's result
const subagent = async (hotel) => {
  const inner = { model, prompt: `Book ${hotel}`, maxRetries: 0 };
  if (v6) inner.experimental_telemetry = { isEnabled: true, functionId: 'booking' };
  else inner.telemetry = { functionId: 'booking' };
  return (await ai.generateText(inner)).text;
};
const args = {
  model,
  system: spec.system,
  prompt: spec.prompt,
  tools: {
    search: ai.tool({
      description: 'Find hotels in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: run('search'),
    }),
    book: ai.tool({
      description: 'Book a hotel',
      inputSchema: z.object({ hotel: z.string() }),
      execute: run('book'),
    }),
  },
  stopWhen: ai.stepCountIs(5),
  maxRetries: 0,
};
if (v6) args.experimental_telemetry = { isEnabled: true, functionId: 'travel' };
else args.telemetry = { functionId: 'travel' };

let result;
if (spec.mode === 'stream') {
  const stream = ai.streamText(args);
  await stream.consumeStream();
  result = {
    text: await stream.text,
    steps: await stream.steps,
    totalUsage: await stream.totalUsage,
  };
} else {
  result = await ai.generateText(args);
}
await flush();
const tokens = (u) => ({ input: u.inputTokens, output: u.outputTokens });
console.log(JSON.stringify({
  text: result.text,
  steps: result.steps.map((s) => tokens(s.usage)),
  total: tokens(result.totalUsage),
  executed,
}));
