package dev.lease.autoconfigure;

/** When the starter creates the tables it needs, mirroring how Spring Boot initialises its own schemas. */
public enum SchemaInitialization {

    /** Only when the DataSource is an embedded database (H2, HSQLDB, Derby). */
    EMBEDDED,

    /** On every startup; the DDL is idempotent ({@code CREATE TABLE IF NOT EXISTS}). */
    ALWAYS,

    /** Never: the tables are managed by the application's own migrations (Flyway, Liquibase). */
    NEVER
}
