// jility's scenario through the cloud bridge: `JILITY_MODE=cloud jility --mcp-server` (stdio,
// and `--http`) talking to `jility serve` on a fresh PostgreSQL database (harness.mjs).
import { serverSuite } from './suite.mjs';

serverSuite('jility-bridge');
