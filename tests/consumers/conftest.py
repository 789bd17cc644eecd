from etpkg_fixtures import package_wheel, toysdk_wheel_for_consumers  # noqa: F401
from etrt_fixtures import etrt_wheel, exported_program, tool_runner  # noqa: F401
