// The modes of the data directory's files and directories (store/data-dir.ts), apart from the code
// that opens the stores: the CLI sets its umask before it knows which command runs.
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_UMASK = 0o077;
