/** Fault scenarios of {@code @Once} scheduled jobs: effects per period across instances. */
package dev.lease.faults.scenarios.once;
