import { serverSuite } from './suite.mjs';

serverSuite('twig-mcp');
