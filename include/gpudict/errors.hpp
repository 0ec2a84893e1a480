// gpudict: the errors the library throws.
#pragma once

#include "core/common/errors.hpp"
