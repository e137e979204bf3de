/** Reads a variable the stack sets; a missing one is a deployment error worth failing loudly on. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}
