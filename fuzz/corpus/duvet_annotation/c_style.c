/*
 *= https://www.rfc-editor.org/rfc/rfc9000#section-4.5
 *= type=test
 *# An endpoint MUST NOT send data on a stream at or beyond the final
 *# size.
 */
int check(void);
