import { serverSuite } from './suite.mjs';

serverSuite('duvet');
