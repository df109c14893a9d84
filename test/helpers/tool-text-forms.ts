import type { ToolSchemas } from '../../src/protocols/tool-text/recover.js';

// Each form's exact text as the model family's own chat template or documentation spells it:
// - Hermes / Qwen2.5: Qwen2.5-Instruct's chat_template (tokenizer_config.json), "For each function
//   call, return a json object with function name and arguments within <tool_call></tool_call>
//   XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>".
// - Qwen3-Coder: Qwen3-Coder-30B-A3B-Instruct's chat_template and qwen3coder_tool_parser.py,
//   "<tool_call>\n<function=NAME>\n<parameter=P>\nV\n</parameter>\n</function>\n</tool_call>".
// - Mistral (v3–v7 tokenizers): llama.cpp models/templates/mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja,
//   "[TOOL_CALLS] [" + {"name": …, "arguments": …} + "]".
// - Mistral v11 (Magistral, Devstral): vLLM's mistral_tool_parser, "[TOOL_CALLS]name[ARGS]{...}".
// - Llama 3.1/3.2/3.3: llama-models' prompt format docs (prompt_format.md), "<|python_tag|>" and
//   JSON {"name": …, "parameters": …}, ended by "<|eom_id|>".
export const HERMES = '<tool_call>\n{"name": "Bash", "arguments": {"command": "ls -la"}}\n</tool_call>';
export const QWEN3_XML =
  '<tool_call>\n<function=Read>\n<parameter=file_path>\n/tmp/a.txt\n</parameter>\n<parameter=limit>\n20\n</parameter>\n</function>\n</tool_call>';
export const MISTRAL = '[TOOL_CALLS] [{"name": "Bash", "arguments": {"command": "ls -la"}}]';
export const MISTRAL_ARGS = '[TOOL_CALLS]Bash[ARGS]{"command": "ls -la"}';
export const PYTHON_TAG = '<|python_tag|>{"name": "Bash", "parameters": {"command": "ls -la"}}<|eom_id|>';

export const TOOLS: ToolSchemas = new Map<string, Record<string, unknown>>([
  [
    'Bash',
    {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { command: { type: 'string' }, timeout: { type: 'integer' } },
      required: ['command'],
      additionalProperties: false,
    },
  ],
  ['Read', { type: 'object', properties: { file_path: { type: 'string' }, limit: { type: 'integer' } }, required: ['file_path'] }],
  ['Mode', { type: 'object', properties: { mode: { enum: ['fast', 'slow'] } }, required: ['mode'] }],
]);
