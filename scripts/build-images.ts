// Builds (or finds, when their inputs are unchanged) the test seed's images as OCI layouts under
// .tools/images/ (see local/kube/images.ts) and prints them: `npm run build:images [-- <name>...]`.
// `--prepare`: only what does not depend on the working tree (npm test's background build).
import { buildTestImages, prepareTestImages, TEST_IMAGES, type TestImageName } from '../local/kube/images.js';

const args = process.argv.slice(2);
if (args[0] === '--prepare') {
  const started = Date.now();
  await prepareTestImages({ log: (line) => console.error(line) });
  console.error(`build-images: prepared in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(0);
}
const unknown = args.filter((a) => !(TEST_IMAGES as readonly string[]).includes(a));
if (unknown.length > 0) {
  console.error(`build-images: unknown image ${unknown.join(', ')} (images: ${TEST_IMAGES.join(', ')})`);
  process.exit(2);
}
const started = Date.now();
const images = await buildTestImages({
  ...(args.length > 0 ? { which: args as TestImageName[] } : {}),
  log: (line) => console.error(line),
});
for (const image of Object.values(images)) console.log(`${image.ref}\t${image.layout}`);
console.error(`build-images: ok in ${Math.round((Date.now() - started) / 1000)} s`);
