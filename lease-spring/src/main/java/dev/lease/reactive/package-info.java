/**
 * Leases for Reactor pipelines: {@code @Leased} and {@code @LeaderOnly} on {@code Mono}/{@code Flux} methods, the
 * programmatic {@link dev.lease.reactive.ReactiveLeaseTemplate} and the lease in the Reactor context
 * ({@link dev.lease.reactive.ReactiveLeaseContext}). A lost lease cancels the section's subscription and signals
 * {@link dev.lease.LeaseLostException}: the reactive twin of the interrupt. Needs reactor-core on the classpath.
 */
package dev.lease.reactive;
