/** `<project>/<name>`, also as `-o name` prints it (`shoot/<project>/<name>`). */
export function splitShoot(ref: string): [string, string] {
  const [project, name, ...rest] = ref.replace(/^shoots?\//, '').split('/');
  if (!project || !name || rest.length > 0) throw new Error(`"${ref}" is not <project>/<name>`);
  return [project, name];
}

/** A seed's name, also as `-o name` prints it (`seed/<name>`). */
export function seedName(ref: string): string {
  const name = ref.replace(/^seeds?\//, '');
  if (!name || name.includes('/')) throw new Error(`"${ref}" is not a seed name`);
  return name;
}
