import { serverSuite } from './suite.mjs';

serverSuite('jility');
