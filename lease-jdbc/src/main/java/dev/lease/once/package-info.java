/**
 * The JDBC store of {@link dev.lease.Once} keys: the table {@code lease_once} beside the application's data, written
 * in the work's own transaction.
 */
package dev.lease.once;
