/**
 * Fault scenarios on JDBC leases (PostgreSQL, and MariaDB under the nemesis and with shared tokens): faults on the
 * holder, on the database and its connections, the JPA and R2DBC workloads, batched renewal, and the nemesis.
 */
package dev.lease.faults.scenarios.jdbc;
