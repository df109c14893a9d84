import { describe, expect, it } from 'vitest';
import { SaidOnce } from '../../../src/util/said-once.js';

describe('SaidOnce', () => {
  it('is true the first time a key is seen, then never again for it', () => {
    const said = new SaidOnce();
    expect([said.first('a'), said.first('b'), said.first('a'), said.first('b')]).toEqual([true, true, false, false]);
  });

  it('says nothing new once it holds its bound of keys, and still nothing twice', () => {
    const said = new SaidOnce(2);
    expect([said.first('a'), said.first('b'), said.first('c'), said.first('a'), said.first('c')]).toEqual([true, true, false, false, false]);
  });
});
