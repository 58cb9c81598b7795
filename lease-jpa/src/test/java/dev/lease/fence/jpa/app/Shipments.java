package dev.lease.fence.jpa.app;

import org.springframework.data.jpa.repository.JpaRepository;

public interface Shipments extends JpaRepository<Shipment, Long> {
}
