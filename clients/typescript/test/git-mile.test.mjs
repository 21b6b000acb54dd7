import { serverSuite } from './suite.mjs';

serverSuite('git-mile');
