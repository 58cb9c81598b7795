package dev.lease.samples.payments.billing;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;

/**
 * The billing service: it bills each invoice under a CORRECTNESS lease on ZooKeeper and has the payments service
 * pay it. It has no database of its own; its configuration is {@code billing.yml}.
 */
@SpringBootApplication(exclude = DataSourceAutoConfiguration.class)
public class BillingApplication {

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(BillingApplication.class);
        app.setDefaultProperties(java.util.Map.of("spring.config.name", "billing"));
        app.run(args);
    }
}
