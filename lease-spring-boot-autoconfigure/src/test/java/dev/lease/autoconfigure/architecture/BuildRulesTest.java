package dev.lease.autoconfigure.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * Issue 44: {@code ./mvnw install -Dmaven.test.skip=true} on a fresh clone works. Maven skips building test jars
 * then, but still resolves test-scoped dependencies on them, so every dependency on another module's test jar must
 * sit in a profile that is off when {@code maven.test.skip} is {@code true} (as {@code test-jars} in lease-jdbc's
 * POM). Checking the POMs keeps {@code .ci/run} from paying for a second build of every module.
 */
class BuildRulesTest {

    @Test
    void everyTestJarDependencyIsLeftOutWhenTestsAreSkipped() throws Exception {
        assertThat(testJarsNeededWithTestsSkipped(Path.of("..").toAbsolutePath().normalize()))
                .as("move these into a profile activated by <name>maven.test.skip</name><value>!true</value>")
                .isEmpty();
    }

    @Test
    void theRuleSeesATestJarOutsideSuchAProfile(@TempDir Path checkout) throws Exception {
        String dependency = "<dependency><artifactId>lease-core</artifactId><type>test-jar</type></dependency>";
        write(checkout.resolve("lease-x/pom.xml"), "<project><dependencies>" + dependency + "</dependencies></project>");
        write(checkout.resolve("lease-y/pom.xml"), "<project><profiles><profile><activation><property><name>"
                + "maven.test.skip</name><value>!true</value></property></activation><dependencies>" + dependency
                + "</dependencies></profile></profiles></project>");
        assertThat(testJarsNeededWithTestsSkipped(checkout)).containsExactly("lease-x needs lease-core's test jar");
    }

    private static List<String> testJarsNeededWithTestsSkipped(Path root) throws Exception {
        List<Path> poms;
        try (Stream<Path> found = Files.walk(root, 3)) {
            poms = found.filter(p -> p.getFileName().toString().equals("pom.xml") && !p.getParent().equals(root))
                    .filter(p -> !p.toString().contains("/target/")).sorted().toList();
        }
        List<String> culprits = new ArrayList<>();
        for (Path pom : poms) {
            NodeList dependencies = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile())
                    .getElementsByTagName("dependency");
            for (int i = 0; i < dependencies.getLength(); i++) {
                Element dependency = (Element) dependencies.item(i);
                if ("test-jar".equals(text(dependency, "type")) && !inProfileOffWhenTestsAreSkipped(dependency)) {
                    culprits.add(root.relativize(pom.getParent()) + " needs " + text(dependency, "artifactId")
                            + "'s test jar");
                }
            }
        }
        return culprits;
    }

    private static boolean inProfileOffWhenTestsAreSkipped(Element dependency) {
        for (Node up = dependency.getParentNode(); up instanceof Element element; up = up.getParentNode()) {
            if (element.getTagName().equals("dependencyManagement")) {
                return true; // a version, not a dependency
            }
            if (element.getTagName().equals("profile")) {
                NodeList properties = element.getElementsByTagName("property");
                return properties.getLength() == 1
                        && "maven.test.skip".equals(text((Element) properties.item(0), "name"))
                        && "!true".equals(text((Element) properties.item(0), "value"));
            }
        }
        return false;
    }

    private static String text(Element parent, String child) {
        NodeList found = parent.getElementsByTagName(child);
        return found.getLength() == 0 ? null : found.item(0).getTextContent().trim();
    }

    private static void write(Path file, String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }
}
