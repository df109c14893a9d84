import { describe, expect, it } from 'vitest';
import { fenceSpans, fencedBlocks, outsideFences } from '../../../src/savers/fences.js';

describe('fenced code blocks', () => {
  it('finds ``` and ~~~ blocks, from the opening line to the closing line', () => {
    const text = 'intro\n```ts\nconst a  =  1;\n```\nmiddle\n~~~\nx\n~~~\nend';
    expect(fencedBlocks(text)).toEqual(['```ts\nconst a  =  1;\n```', '~~~\nx\n~~~']);
  });

  it('an unclosed fence runs to the end', () => {
    expect(fencedBlocks('a\n```\nopen   code\n\n\n')).toEqual(['```\nopen   code\n\n\n']);
  });

  it('closes only on the same character, at least as long, alone on its line', () => {
    const text = '````\n```\nstill code\n~~~\n```` not a close\n````\nafter';
    expect(fencedBlocks(text)).toEqual(['````\n```\nstill code\n~~~\n```` not a close\n````']);
  });

  it('indented fences count (list items); ```inline``` on one line is not a fence', () => {
    expect(fencedBlocks('- item\n    ```\n    code\n    ```\n')).toEqual(['    ```\n    code\n    ```']);
    expect(fenceSpans('use ```x``` here\n```not``` either')).toEqual([]);
  });

  it('CRLF lines fence like LF lines', () => {
    expect(fencedBlocks('a\r\n```\r\ncode\r\n```\r\nb')).toEqual(['```\r\ncode\r\n```\r']);
  });

  it('outsideFences changes only the prose and keeps each block byte for byte', () => {
    const text = 'A  b\n```\nA  b\n```\nA  b';
    expect(outsideFences(text, (prose) => prose.replace(/ +/g, ' '))).toBe('A b\n```\nA  b\n```\nA b');
  });
});
