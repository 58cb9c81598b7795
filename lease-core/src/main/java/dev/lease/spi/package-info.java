/**
 * What a lease backend implements. The engine ({@code dev.lease.core}) does everything that does not depend on
 * the store: waiting with backoff, renewal scheduling, monotonic local validity, interrupting the holder on loss,
 * thread binding. A backend only grants, renews and releases one name at a time, on the store's own clock.
 */
package dev.lease.spi;
