/**
 * The width each embeddings route's vector space answers in (docs/embeddings.md): fixed by the
 * first answer one of its tiers gives, per route and space, so that a tier that later answers
 * another width (another model behind the same name) is an error and its vectors never reach an
 * index built from the others. In memory only, per instance: a restart learns it again from the
 * next answer. Bounded by the tier file (one entry per route and space).
 */
export class SpaceWidths {
  private readonly widths = new Map<string, number>();

  /** `width` agrees with the space's, and fixes it when it is the first: true; else the space's width. */
  agree(route: string, space: string, width: number): true | number {
    const key = `${route}\u0000${space}`;
    const known = this.widths.get(key);
    if (known === undefined) {
      this.widths.set(key, width);
      return true;
    }
    return known === width ? true : known;
  }

  /** The space's width on `route`, once an answer fixed it. */
  widthOf(route: string, space: string): number | undefined {
    return this.widths.get(`${route}\u0000${space}`);
  }
}
