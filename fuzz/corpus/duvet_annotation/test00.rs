use core::fmt;

impl Stream {
    //= https://www.rfc-editor.org/rfc/rfc9000#section-4.5
    //# An endpoint that receives a STREAM frame with a final size that
    //#   differs from the established final size MUST respond with
    //# a FINAL_SIZE_ERROR error.
    fn on_final_size(&mut self) {}
}
